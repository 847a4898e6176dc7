[("W2 EP8", 128, False, [
   ((64,128,2,None,None),1,True,64,False,False),
   ((64,128,2,None,None),1,True,32,False,False),
   ((64,128,2,None,None),1,False,64,False,False),
 ]),
 ("W13 EP8", 128, False, [
   ((64,64,2,None,None),1,True,64,False,False),
   ((64,64,2,None,None),1,True,32,False,False),
   ((64,64,2,None,None),1,False,64,False,False),
 ]),
 ("W13 EP8", 256, False, [
   ((64,64,2,None,None),1,True,64,False,False),
   ((128,64,2,None,None),1,True,None,False,False),
   ((64,64,2,None,None),1,False,None,False,False),
 ]),
 ("W2 EP8", 256, False, [
   ((64,128,2,None,None),1,True,64,False,False),
   ((128,128,2,None,None),1,True,None,False,False),
 ]),
]
